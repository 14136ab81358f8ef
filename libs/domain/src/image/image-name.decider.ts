import type { Decider } from '../shared/decider';
import { conflict } from '../shared/domain-error';
import type { ImageNameCommand } from './image-name.commands';
import type { ImageNameEvent } from './image-name.events';

export interface ImageNameState {
  org_id: string | null;
  image_name: string | null;
  /** The image holding the name (null: free). */
  holder: string | null;
  reserved_at: string | null;
}

const initialState = (): ImageNameState => ({ org_id: null, image_name: null, holder: null, reserved_at: null });

function decide(command: ImageNameCommand, state: ImageNameState): ImageNameEvent[] {
  switch (command.type) {
    case 'ReserveImageName': {
      const { org_id, image_name, image_id, now } = command;
      if (state.holder === image_id) return [];
      if (state.holder !== null && state.holder !== command.replacing) throw conflict(`image '${image_name}' already exists`);
      return [{ type: 'ImageNameReserved', data: { org_id, image_name, image_id, reserved_at: now } }];
    }
    case 'ReleaseImageName':
      if (state.holder !== command.image_id) return [];
      return [{ type: 'ImageNameReleased', data: { org_id: state.org_id!, image_name: state.image_name!, image_id: command.image_id, released_at: command.now } }];
  }
}

function evolve(state: ImageNameState, event: ImageNameEvent): ImageNameState {
  switch (event.type) {
    case 'ImageNameReserved':
      return { org_id: event.data.org_id, image_name: event.data.image_name, holder: event.data.image_id, reserved_at: event.data.reserved_at };
    case 'ImageNameReleased':
      return { ...state, holder: null, reserved_at: null };
  }
}

export const imageNameDecider: Decider<ImageNameCommand, ImageNameState, ImageNameEvent> = { initialState, decide, evolve };
